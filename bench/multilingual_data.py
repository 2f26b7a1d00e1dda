"""Chat in languages other than English and Japanese — Korean, Arabic, Hindi, German, Spanish, Chinese, Thai — in LoCoMo's
JSON format, written by this project so that ``python -m bench.locomo --data FILE`` runs on them unchanged.

Our corpora are English and Japanese; a user may talk in anything else. In Hangul, Arabic, Devanagari and Thai
Sudachi returns symbols, and until 2026-11-29 every keyword channel was blind to them (nodes.text.tokenize); in
German and Spanish the words are read, but no stop list knows their function words. Each conversation is a user and
Lumina over six sessions two days apart: the user says eight facts about themself (a pet's name, a trip, a food,
a sister's name, a hobby, a job, a book, a birthday), each once, and the same kinds of fact about a friend, with
other values, in other sessions (so the words a question shares with its fact also find a look-alike); the rest
is small talk. Questions are LoCoMo category 4 (single-hop), phrased as a user asks them, not as the fact was said.

    python -m bench.multilingual_data --out /tmp/multilingual.json [--per-language 2] [--seed 29]

A seed gives the same file byte for byte. The sentences were written by hand for this set (no translation of
LoCoMo): plain, everyday register.
"""

from __future__ import annotations

import argparse
import json
import random
import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

# slot -> (the user's statement, a friend's look-alike, the question, values)
LANGUAGES: dict[str, dict[str, Any]] = {
    "ko": {
        "speakers": ("민지", "Lumina"),
        "slots": {
            "pet": ("우리 강아지 이름은 {v}<야>.", "친구네 강아지 이름은 {v}<래>.", "내 강아지 이름이 뭐였지?",
                    ["초코", "보리", "콩이", "해피", "두부"]),
            "trip": ("다음 달에 {v}<로> 여행 가.", "친구는 다음 달에 {v}<로> 여행 간대.", "다음 달에 내가 어디로 여행 간다고 했지?",
                     ["부산", "제주도", "강릉", "전주", "경주"]),
            "food": ("요즘 {v}에 완전 빠졌어.", "동생은 요즘 {v}에 빠졌대.", "요즘 내가 빠진 음식이 뭐였지?",
                     ["떡볶이", "김치찌개", "냉면", "비빔밥", "순두부찌개"]),
            "sister": ("내 여동생 이름은 {v}<야>.", "친구 여동생 이름은 {v}<래>.", "내 여동생 이름이 뭐였지?",
                       ["지민", "수아", "하은", "서연", "예린"]),
            "hobby": ("주말마다 {v}<를> 배우고 있어.", "친구는 주말마다 {v}<를> 배운대.", "내가 주말마다 뭘 배운다고 했지?",
                      ["기타", "수영", "요가", "도자기", "테니스"]),
            "job": ("나 병원에서 {v}<로> 일해.", "친구는 {v}<로> 일한대.", "내 직업이 뭐라고 했지?",
                    ["간호사", "물리치료사", "약사", "방사선사", "영양사"]),
            "book": ("요즘 '{v}'<라는> 소설을 읽고 있어.", "친구는 '{v}'<를> 읽고 있대.", "요즘 내가 읽는 소설 제목이 뭐야?",
                     ["채식주의자", "소년이 온다", "아몬드", "달러구트 꿈 백화점", "불편한 편의점"]),
            "birthday": ("내 생일은 {v}<야>.", "친구 생일은 {v}<래>.", "내 생일이 언제라고 했지?",
                         ["3월 14일", "7월 2일", "10월 9일", "12월 25일", "5월 30일"]),
        },
        "user": ["안녕! 오늘 하루 어땠어?", "오늘 날씨 진짜 좋다.", "어제 늦게 자서 좀 피곤해.", "점심 뭐 먹을지 고민 중이야.",
                 "요즘 회사 일이 좀 바빠.", "주말에 뭐 할까 생각 중이야.", "비가 와서 집에만 있었어.", "커피 한 잔 마시는 중이야.",
                 "오늘 운동 좀 했어.", "드라마 보다가 잠들었어.", "버스가 너무 늦게 와서 짜증났어.", "이제 자러 갈게, 잘 자!"],
        "lumina": ["그렇구나! 더 얘기해 줘.", "좋네! 기분이 어때?", "와, 재미있겠다!", "푹 쉬는 것도 중요해.",
                   "응, 기억해 둘게.", "힘내! 응원할게.", "그거 멋지다!", "오늘도 수고 많았어."],
    },
    "ar": {
        "speakers": ("سارة", "Lumina"),
        "slots": {
            "pet": ("اسم كلبي {v}.", "اسم كلب صديقتي {v}.", "ما اسم كلبي؟", ["ماكس", "لولو", "سكر", "بندق", "فلفل"]),
            "trip": ("سأسافر الشهر القادم إلى {v}.", "صديقتي ستسافر الشهر القادم إلى {v}.", "إلى أين قلت إنني سأسافر؟",
                     ["الإسكندرية", "دبي", "عمّان", "مراكش", "بيروت"]),
            "food": ("أكلتي المفضلة هذه الأيام هي {v}.", "أخي يحب {v} كثيرا هذه الأيام.", "ما الأكلة التي أحبها هذه الأيام؟",
                     ["الكبسة", "الفلافل", "المنسف", "الكشري", "المقلوبة"]),
            "sister": ("اسم أختي الصغيرة {v}.", "اسم أخت صديقتي {v}.", "ما اسم أختي الصغيرة؟",
                       ["ليلى", "نور", "سلمى", "ريم", "هدى"]),
            "hobby": ("أتعلم {v} في عطلة نهاية الأسبوع.", "صديقتي تتعلم {v} في عطلة نهاية الأسبوع.", "ماذا أتعلم في العطلة؟",
                      ["العزف على العود", "السباحة", "الخط العربي", "التطريز", "الشطرنج"]),
            "job": ("أعمل {v} في المستشفى.", "صديقتي تعمل {v}.", "ما هي وظيفتي؟",
                    ["ممرضة", "صيدلانية", "طبيبة أسنان", "أخصائية تغذية", "فنية مختبر"]),
            "book": ("أقرأ هذه الأيام رواية {v}.", "صديقتي تقرأ رواية {v}.", "ما الرواية التي أقرأها الآن؟",
                     ["موسم الهجرة إلى الشمال", "رجال في الشمس", "ثلاثية غرناطة", "الخبز الحافي", "عزازيل"]),
            "birthday": ("عيد ميلادي في {v}.", "عيد ميلاد صديقتي في {v}.", "متى عيد ميلادي؟",
                         ["14 مارس", "2 يوليو", "9 أكتوبر", "25 ديسمبر", "30 مايو"]),
        },
        "user": ["مرحبا! كيف حالك اليوم؟", "الجو جميل جدا اليوم.", "نمت متأخرة أمس وأنا متعبة قليلا.", "لا أعرف ماذا آكل على الغداء.",
                 "العمل مزدحم هذه الأيام.", "أفكر فيما سأفعله في العطلة.", "بقيت في البيت بسبب المطر.", "أشرب فنجان قهوة الآن.",
                 "مارست الرياضة اليوم.", "نمت وأنا أشاهد مسلسلا.", "تأخرت الحافلة كثيرا اليوم.", "سأذهب للنوم الآن، تصبحين على خير!"],
        "lumina": ["فهمت! أخبريني المزيد.", "رائع! كيف تشعرين؟", "يبدو هذا ممتعا!", "الراحة مهمة أيضا.",
                   "حسنا، سأتذكر ذلك.", "بالتوفيق! أنا معك.", "هذا جميل جدا!", "أحسنت اليوم."],
    },
    "hi": {
        "speakers": ("अनु", "Lumina"),
        "slots": {
            "pet": ("मेरे कुत्ते का नाम {v} है।", "मेरी सहेली के कुत्ते का नाम {v} है।", "मेरे कुत्ते का नाम क्या था?",
                    ["मोती", "शेरू", "टॉमी", "बिस्कुट", "भूरा"]),
            "trip": ("अगले महीने मैं {v} घूमने जा रही हूँ।", "मेरी सहेली अगले महीने {v} जा रही है।", "मैंने कहा था कि मैं कहाँ घूमने जा रही हूँ?",
                     ["जयपुर", "गोवा", "मनाली", "वाराणसी", "ऋषिकेश"]),
            "food": ("आजकल मुझे {v} बहुत पसंद है।", "मेरे भाई को आजकल {v} पसंद है।", "आजकल मुझे कौन सा खाना पसंद है?",
                     ["पनीर टिक्का", "छोले भटूरे", "मसाला डोसा", "राजमा चावल", "पाव भाजी"]),
            "sister": ("मेरी छोटी बहन का नाम {v} है।", "मेरी सहेली की बहन का नाम {v} है।", "मेरी छोटी बहन का नाम क्या है?",
                       ["प्रिया", "अनन्या", "नेहा", "कविता", "दिव्या"]),
            "hobby": ("मैं हर सप्ताहांत {v} सीख रही हूँ।", "मेरी सहेली हर सप्ताहांत {v} सीखती है।", "मैं छुट्टी के दिन क्या सीखती हूँ?",
                      ["सितार", "तैराकी", "कथक", "चित्रकारी", "शतरंज"]),
            "job": ("मैं अस्पताल में {v} हूँ।", "मेरी सहेली {v} है।", "मेरा पेशा क्या है?",
                    ["नर्स", "फार्मासिस्ट", "फिजियोथेरेपिस्ट", "डायटीशियन", "लैब तकनीशियन"]),
            "book": ("आजकल मैं '{v}' पढ़ रही हूँ।", "मेरी सहेली '{v}' पढ़ रही है।", "आजकल मैं कौन सी किताब पढ़ रही हूँ?",
                     ["गोदान", "गुनाहों का देवता", "राग दरबारी", "मैला आँचल", "तमस"]),
            "birthday": ("मेरा जन्मदिन {v} को है।", "मेरी सहेली का जन्मदिन {v} को है।", "मेरा जन्मदिन कब है?",
                         ["14 मार्च", "2 जुलाई", "9 अक्टूबर", "25 दिसंबर", "30 मई"]),
        },
        "user": ["नमस्ते! आज तुम्हारा दिन कैसा रहा?", "आज मौसम बहुत अच्छा है।", "कल देर से सोई थी, थोड़ी थकी हूँ।", "सोच रही हूँ दोपहर में क्या खाऊँ।",
                 "आजकल ऑफिस में बहुत काम है।", "सोच रही हूँ इस सप्ताहांत क्या करूँ।", "बारिश की वजह से घर पर ही रही।", "अभी चाय पी रही हूँ।",
                 "आज थोड़ा व्यायाम किया।", "सीरियल देखते देखते सो गई।", "बस बहुत देर से आई, बड़ी झुंझलाहट हुई।", "अब सोने जा रही हूँ, शुभ रात्रि!"],
        "lumina": ["अच्छा! और बताओ।", "बढ़िया! कैसा लग रहा है?", "वाह, मज़ेदार लगता है!", "आराम करना भी ज़रूरी है।",
                   "ठीक है, मैं याद रखूँगी।", "हिम्मत रखो! मैं साथ हूँ।", "यह तो बहुत अच्छा है!", "आज भी बहुत मेहनत की।"],
    },
    "de": {
        "speakers": ("Lena", "Lumina"),
        "slots": {
            "pet": ("Mein Hund heißt {v}.", "Der Hund meiner Freundin heißt {v}.", "Wie heißt nochmal mein Hund?",
                    ["Bello", "Struppi", "Luna", "Kiwi", "Bruno"]),
            "trip": ("Nächsten Monat fahre ich nach {v}.", "Meine Freundin fährt nächsten Monat nach {v}.",
                     "Wohin wollte ich nächsten Monat fahren?", ["Hamburg", "Wien", "Dresden", "Lissabon", "Krakau"]),
            "food": ("Gerade esse ich total gern {v}.", "Mein Bruder isst gerade gern {v}.", "Was esse ich gerade am liebsten?",
                     ["Käsespätzle", "Linsensuppe", "Flammkuchen", "Rouladen", "Kartoffelpuffer"]),
            "sister": ("Meine kleine Schwester heißt {v}.", "Die Schwester meiner Freundin heißt {v}.", "Wie heißt meine kleine Schwester?",
                       ["Mia", "Hannah", "Emilia", "Clara", "Greta"]),
            "hobby": ("Am Wochenende lerne ich {v}.", "Meine Freundin lernt am Wochenende {v}.", "Was lerne ich an den Wochenenden?",
                      ["Geige", "Schwimmen", "Töpfern", "Klettern", "Schach"]),
            "job": ("Ich arbeite als {v} im Krankenhaus.", "Meine Freundin arbeitet als {v}.", "Was ist mein Beruf?",
                    ["Krankenschwester", "Apothekerin", "Physiotherapeutin", "Hebamme", "Laborantin"]),
            "book": ("Ich lese gerade den Roman „{v}“.", "Meine Freundin liest „{v}“.", "Welchen Roman lese ich gerade?",
                     ["Der Vorleser", "Tschick", "Die Vermessung der Welt", "Der Steppenwolf", "Momo"]),
            "birthday": ("Mein Geburtstag ist am {v}.", "Der Geburtstag meiner Freundin ist am {v}.", "Wann habe ich Geburtstag?",
                         ["14. März", "2. Juli", "9. Oktober", "25. Dezember", "30. Mai"]),
        },
        "user": ["Hallo! Wie war dein Tag?", "Das Wetter ist heute wirklich schön.", "Ich bin gestern spät ins Bett, bin etwas müde.",
                 "Ich überlege, was ich zu Mittag esse.", "Auf der Arbeit ist gerade viel los.", "Ich überlege, was ich am Wochenende mache.",
                 "Wegen des Regens bin ich zu Hause geblieben.", "Ich trinke gerade einen Kaffee.", "Ich war heute ein bisschen Sport machen.",
                 "Ich bin beim Serienschauen eingeschlafen.", "Der Bus kam viel zu spät, wie ärgerlich.", "Ich gehe jetzt schlafen, gute Nacht!"],
        "lumina": ["Ach so! Erzähl mehr.", "Schön! Wie fühlst du dich?", "Oh, das klingt lustig!", "Ausruhen ist auch wichtig.",
                   "Alles klar, ich merke es mir.", "Kopf hoch! Ich bin für dich da.", "Das ist ja toll!", "Du hast heute viel geschafft."],
    },
    "es": {
        "speakers": ("Lucía", "Lumina"),
        "slots": {
            "pet": ("Mi perro se llama {v}.", "El perro de mi amiga se llama {v}.", "¿Cómo se llamaba mi perro?",
                    ["Toby", "Canela", "Rocky", "Lola", "Chispa"]),
            "trip": ("El mes que viene me voy a {v}.", "Mi amiga se va a {v} el mes que viene.", "¿A dónde dije que me iba el mes que viene?",
                     ["Sevilla", "Valencia", "Granada", "Oporto", "Bilbao"]),
            "food": ("Últimamente me encanta {v}.", "A mi hermano últimamente le encanta {v}.", "¿Qué comida me gusta últimamente?",
                     ["el salmorejo", "la paella", "el gazpacho", "la tortilla de patatas", "el pulpo a la gallega"]),
            "sister": ("Mi hermana pequeña se llama {v}.", "La hermana de mi amiga se llama {v}.", "¿Cómo se llama mi hermana pequeña?",
                       ["Carmen", "Paula", "Martina", "Irene", "Alba"]),
            "hobby": ("Los fines de semana aprendo {v}.", "Mi amiga aprende {v} los fines de semana.", "¿Qué aprendo los fines de semana?",
                      ["guitarra", "natación", "cerámica", "escalada", "ajedrez"]),
            "job": ("Trabajo de {v} en el hospital.", "Mi amiga trabaja de {v}.", "¿Cuál es mi profesión?",
                    ["enfermera", "farmacéutica", "fisioterapeuta", "matrona", "técnica de laboratorio"]),
            "book": ("Estoy leyendo la novela «{v}».", "Mi amiga está leyendo «{v}».", "¿Qué novela estoy leyendo ahora?",
                     ["Nada", "La sombra del viento", "Patria", "El infinito en un junco", "Los santos inocentes"]),
            "birthday": ("Mi cumpleaños es el {v}.", "El cumpleaños de mi amiga es el {v}.", "¿Cuándo es mi cumpleaños?",
                         ["14 de marzo", "2 de julio", "9 de octubre", "25 de diciembre", "30 de mayo"]),
        },
        "user": ["¡Hola! ¿Qué tal tu día?", "Hoy hace un tiempo buenísimo.", "Ayer me acosté tarde y estoy un poco cansada.",
                 "Estoy pensando qué comer a mediodía.", "En el trabajo hay muchísimo lío estos días.", "Estoy pensando qué hacer el fin de semana.",
                 "Me quedé en casa por la lluvia.", "Me estoy tomando un café.", "Hoy hice un poco de ejercicio.",
                 "Me quedé dormida viendo una serie.", "El autobús tardó muchísimo, qué rabia.", "Me voy a dormir, ¡buenas noches!"],
        "lumina": ["¡Ah, sí! Cuéntame más.", "¡Qué bien! ¿Cómo te sientes?", "¡Qué divertido suena!", "Descansar también es importante.",
                   "Vale, lo recordaré.", "¡Ánimo! Estoy contigo.", "¡Eso es genial!", "Hoy has hecho mucho."],
    },
    "zh": {
        "speakers": ("小雨", "Lumina"),
        "slots": {
            "pet": ("我家的狗叫{v}。", "我朋友家的狗叫{v}。", "我家的狗叫什么名字来着？", ["豆豆", "旺财", "团子", "可乐", "年糕"]),
            "trip": ("下个月我要去{v}旅游。", "我朋友下个月要去{v}。", "我说下个月要去哪里旅游？", ["成都", "厦门", "西安", "大理", "青岛"]),
            "food": ("最近我特别爱吃{v}。", "我弟弟最近爱吃{v}。", "我最近爱吃什么？", ["麻辣烫", "小笼包", "酸菜鱼", "煎饼果子", "螺蛳粉"]),
            "sister": ("我妹妹叫{v}。", "我朋友的妹妹叫{v}。", "我妹妹叫什么？", ["小美", "思琪", "雨萱", "佳怡", "欣然"]),
            "hobby": ("我每个周末都在学{v}。", "我朋友周末在学{v}。", "我周末在学什么？", ["古筝", "游泳", "瑜伽", "书法", "围棋"]),
            "job": ("我在医院当{v}。", "我朋友是{v}。", "我是做什么工作的？", ["护士", "药剂师", "康复治疗师", "营养师", "检验师"]),
            "book": ("我最近在看小说《{v}》。", "我朋友在看《{v}》。", "我最近在看哪本小说？", ["活着", "围城", "平凡的世界", "白鹿原", "三体"]),
            "birthday": ("我的生日是{v}。", "我朋友的生日是{v}。", "我的生日是哪天？", ["3月14日", "7月2日", "10月9日", "12月25日", "5月30日"]),
        },
        "user": ["你好！今天过得怎么样？", "今天天气真好。", "昨天睡得太晚了，有点累。", "在想中午吃什么。", "最近工作特别忙。",
                 "在想这个周末干什么。", "下雨了，一直待在家里。", "正在喝咖啡。", "今天去运动了一下。", "看剧看着看着就睡着了。",
                 "公交车来得太晚了，真烦。", "我去睡觉了，晚安！"],
        "lumina": ["原来如此！多说一点吧。", "太好了！你感觉怎么样？", "哇，听起来很好玩！", "好好休息也很重要。",
                   "好的，我记住了。", "加油！我支持你。", "真棒！", "今天辛苦了。"],
    },
    "th": {
        "speakers": ("มายด์", "Lumina"),
        "slots": {
            "pet": ("หมาของฉันชื่อ{v}", "หมาของเพื่อนฉันชื่อ{v}", "หมาของฉันชื่ออะไรนะ",
                    ["ถุงทอง", "มะลิ", "โบ้", "ข้าวปั้น", "ส้มโอ"]),
            "trip": ("เดือนหน้าฉันจะไปเที่ยว{v}", "เดือนหน้าเพื่อนจะไปเที่ยว{v}", "ฉันบอกว่าจะไปเที่ยวที่ไหนนะ",
                     ["เชียงใหม่", "ภูเก็ต", "กระบี่", "น่าน", "เขาใหญ่"]),
            "food": ("ช่วงนี้ฉันติด{v}มาก", "ช่วงนี้น้องชายติด{v}", "ช่วงนี้ฉันชอบกินอะไร",
                     ["ส้มตำ", "ต้มยำกุ้ง", "ข้าวซอย", "ผัดกะเพรา", "ข้าวมันไก่"]),
            "sister": ("น้องสาวของฉันชื่อ{v}", "น้องสาวของเพื่อนชื่อ{v}", "น้องสาวของฉันชื่ออะไร",
                       ["แพรว", "น้ำฝน", "ใบเตย", "ขวัญข้าว", "มินตรา"]),
            "hobby": ("ทุกสุดสัปดาห์ฉันไปเรียน{v}", "เพื่อนไปเรียน{v}ทุกสุดสัปดาห์", "วันหยุดฉันไปเรียนอะไร",
                      ["กีตาร์", "ว่ายน้ำ", "โยคะ", "มวยไทย", "ปั้นดินเผา"]),
            "job": ("ฉันทำงานเป็น{v}ที่โรงพยาบาล", "เพื่อนทำงานเป็น{v}", "ฉันทำอาชีพอะไร",
                    ["พยาบาล", "เภสัชกร", "นักกายภาพบำบัด", "นักโภชนาการ", "นักเทคนิคการแพทย์"]),
            "book": ("ช่วงนี้ฉันอ่านนิยายเรื่อง{v}", "เพื่อนกำลังอ่านเรื่อง{v}", "ช่วงนี้ฉันอ่านนิยายเรื่องอะไร",
                     ["ข้างหลังภาพ", "สี่แผ่นดิน", "คู่กรรม", "ความสุขของกะทิ", "บ้านทรายทอง"]),
            "birthday": ("วันเกิดของฉันคือวันที่{v}", "วันเกิดของเพื่อนคือวันที่{v}", "วันเกิดของฉันคือวันไหน",
                         ["14 มีนาคม", "2 กรกฎาคม", "9 ตุลาคม", "25 ธันวาคม", "30 พฤษภาคม"]),
        },
        "user": ["สวัสดี วันนี้เป็นยังไงบ้าง", "วันนี้อากาศดีมากเลย", "เมื่อคืนนอนดึก เลยเพลียนิดหน่อย", "กำลังคิดว่ามื้อเที่ยงจะกินอะไรดี",
                 "ช่วงนี้งานยุ่งมาก", "กำลังคิดว่าวันหยุดนี้จะทำอะไรดี", "ฝนตกเลยอยู่แต่บ้าน", "กำลังดื่มกาแฟอยู่",
                 "วันนี้ไปออกกำลังกายมา", "ดูซีรีส์แล้วเผลอหลับไป", "รถเมล์มาช้ามาก หงุดหงิดจัง", "ไปนอนแล้วนะ ฝันดี"],
        "lumina": ["อย่างนั้นเหรอ เล่าต่อสิ", "ดีจัง รู้สึกยังไงบ้าง", "ว้าว น่าสนุกนะ", "พักผ่อนก็สำคัญนะ",
                   "โอเค จะจำไว้นะ", "สู้ๆ นะ เป็นกำลังใจให้", "เยี่ยมไปเลย", "วันนี้เหนื่อยมามากแล้วนะ"],
    },
}

# Korean particles take another form after a final consonant (받침): 부산으로 but 제주도로, 기타를 but 수영을.
_KO_PARTICLES = {"로": ("로", "으로"), "를": ("를", "을"), "야": ("야", "이야"), "래": ("래", "이래"), "라는": ("라는", "이라는")}
_KO_MARK = re.compile(r"<(로|를|야|래|라는)>")


def _ko_particles(text: str) -> str:
    def form(m: re.Match) -> str:
        before = text[:m.start()].rstrip("'")[-1:]
        final = (ord(before) - 0xAC00) % 28 if "\uac00" <= before <= "\ud7a3" else 0
        # ㄹ (8) takes 로, not 으로; a digit is read aloud (14일: 일 ends in ㄹ) — the values here end in 일.
        plain, after_consonant = _KO_PARTICLES[m.group(1)]
        if m.group(1) == "로":
            return plain if final in (0, 8) else after_consonant
        return after_consonant if final else plain

    return _KO_MARK.sub(form, text)


SESSIONS = 6
DAYS_APART = 2


def _conversation(lang: str, n: int, rng: random.Random) -> dict[str, Any]:
    spec = LANGUAGES[lang]
    me, bot = spec["speakers"]
    slots = list(spec["slots"])
    mine = {s: rng.choice(spec["slots"][s][3]) for s in slots}
    theirs = {s: rng.choice([v for v in spec["slots"][s][3] if v != mine[s]]) for s in slots}
    # Each fact in one session, its look-alike in another.
    fact_session = {s: rng.randrange(SESSIONS) for s in slots}
    alike_session = {s: rng.choice([k for k in range(SESSIONS) if k != fact_session[s]]) for s in slots}
    start = datetime(2026, 3, 2, 20, 0) + timedelta(days=rng.randrange(120))
    conversation: dict[str, Any] = {"speaker_a": me, "speaker_b": bot}
    evidence: dict[str, str] = {}
    for k in range(SESSIONS):
        said = [("fact", s) for s in slots if fact_session[s] == k] + [("alike", s) for s in slots if alike_session[s] == k]
        said += [("small", None)] * rng.randint(2, 4)
        rng.shuffle(said)
        turns, d = [], 1
        for kind, slot in said:
            if kind == "small":
                text = rng.choice(spec["user"])
            else:
                statement, alike, _q, _v = spec["slots"][slot]
                text = (statement if kind == "fact" else alike).format(v=mine[slot] if kind == "fact" else theirs[slot])
                text = _ko_particles(text) if lang == "ko" else text
            dia = f"D{k + 1}:{d}"
            if kind == "fact":
                evidence[slot] = dia
            turns.append({"speaker": me, "dia_id": dia, "text": text})
            turns.append({"speaker": bot, "dia_id": f"D{k + 1}:{d + 1}", "text": rng.choice(spec["lumina"])})
            d += 2
        when = start + timedelta(days=DAYS_APART * k, minutes=rng.randrange(90))
        conversation[f"session_{k + 1}_date_time"] = when.strftime("%-I:%M %p on %-d %B, %Y").lower()
        conversation[f"session_{k + 1}"] = turns
    qa = [{"question": spec["slots"][s][2], "answer": mine[s], "evidence": [evidence[s]], "category": 4} for s in slots]
    return {"sample_id": f"multilingual-{lang}-{n:02d}", "language": lang, "conversation": conversation, "qa": qa}


def generate(per_language: int = 2, seed: int = 29, languages: tuple[str, ...] = tuple(LANGUAGES)) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    return [_conversation(lang, n, rng) for lang in languages for n in range(per_language)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--per-language", type=int, default=2)
    parser.add_argument("--seed", type=int, default=29)
    args = parser.parse_args(argv)
    data = generate(args.per_language, args.seed)
    Path(args.out).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")
    print(f"{len(data)} conversations, {sum(len(c['qa']) for c in data)} questions -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
